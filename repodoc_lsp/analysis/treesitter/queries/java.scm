; Java definitions (after tree-sitter-java's queries/tags.scm, with enums, records, fields, constructors)
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
; an interface's constants (`int SIZE = 16;`)
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(import_declaration [(scoped_identifier) (identifier)] @import)
