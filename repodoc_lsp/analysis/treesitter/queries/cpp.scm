; C++ (and CUDA) definitions (after tree-sitter-cpp's queries/tags.scm, with prototypes, namespaces,
; aliases, macros and fields)
(function_declarator declarator: [(identifier) (field_identifier) (qualified_identifier)
                                  (operator_name) (destructor_name) (template_function)] @name) @definition.function
(struct_specifier name: (_) @name body: (_)) @definition.struct
(class_specifier name: (_) @name body: (_)) @definition.class
(union_specifier name: (_) @name body: (_)) @definition.union
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.namespace
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition declarator: (pointer_declarator declarator: (type_identifier) @name)) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.macro
(preproc_function_def name: (identifier) @name) @definition.macro
(field_declaration declarator: [
  (field_identifier) @name
  (pointer_declarator declarator: (field_identifier) @name)
  (reference_declarator (field_identifier) @name)
  (array_declarator declarator: (field_identifier) @name)]) @definition.field
(preproc_include path: (_) @import)
; conversion operators (`operator bool() const`)
([(function_definition declarator: (operator_cast) @name)
  (declaration declarator: (operator_cast) @name)
  (field_declaration declarator: (operator_cast) @name)]) @definition.function
; a class whose body the grammar could not read (a macro call with no `;` in it): the error node
; that starts with `class Name` stands for it, so its members keep it as their container
(ERROR . "class" . (type_identifier) @name) @definition.class
(ERROR . "struct" . (type_identifier) @name) @definition.struct
