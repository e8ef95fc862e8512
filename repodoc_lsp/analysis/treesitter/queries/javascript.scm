; JavaScript definitions (after tree-sitter-javascript's queries/tags.scm, with fields and imports)
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(lexical_declaration (variable_declarator name: (identifier) @name value: (class))) @definition.class
(field_definition property: (property_identifier) @name) @definition.field
(import_statement source: (string) @import)
(export_statement source: (string) @import)
(call_expression function: (identifier) @_require arguments: (arguments . (string) @import)
  (#eq? @_require "require"))
