; Go definitions (after tree-sitter-go's queries/tags.scm, with struct fields and interface methods).
; Types, their fields and interface methods: those of the package (a type declared inside a function,
; an anonymous struct's fields are local, not listed)
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(source_file (type_declaration (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct))
(source_file (type_declaration (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface))
(source_file (type_declaration (type_spec name: (type_identifier) @name) @definition.type))
(source_file (type_declaration (type_alias name: (type_identifier) @name) @definition.type))
(source_file (type_declaration (type_spec type: (struct_type (field_declaration_list
  (field_declaration name: (field_identifier) @name) @definition.field)))))
; an embedded field is named after its type: `struct{ core }`, `*pkg.Base`
(source_file (type_declaration (type_spec type: (struct_type (field_declaration_list
  (field_declaration !name type: [(type_identifier) @name
                                  (pointer_type (type_identifier) @name)
                                  (qualified_type name: (type_identifier) @name)
                                  (pointer_type (qualified_type name: (type_identifier) @name))
                                  (generic_type type: (type_identifier) @name)]) @definition.field)))))
(source_file (type_declaration (type_spec type: (interface_type
  (method_elem name: (field_identifier) @name) @definition.method))))
(import_spec path: (_) @import)
