; JavaScript definitions (after tree-sitter-javascript's queries/tags.scm, with fields and imports)
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
; `module.exports = function query(options) {...}`: named by itself
(program (expression_statement (assignment_expression left: (member_expression) @_exports
  right: (function_expression name: (identifier) @name) @definition.function)) (#eq? @_exports "module.exports"))
; a named function passed or returned (`defineGetter(req, 'ip', function ip() {...})`, `return function
; handler(req, res) {...}`): named by itself
([(arguments (function_expression name: (identifier) @name) @definition.function)
  (return_statement (function_expression name: (identifier) @name) @definition.function)])
; methods of classes (not of object literals: `{ next(v) {...} }` passed to a call)
(class_body (method_definition name: (_) @name) @definition.method)
; `app.handle = function (...) {...}`, `Layer.prototype.match = function`: the prototype-style API of
; a module, at its top level
(program (expression_statement (assignment_expression
  left: (member_expression object: [(identifier) (member_expression)] property: (property_identifier)) @name
  right: [(function_expression) (arrow_function) (generator_function)] @definition.function)))
; `const f = (a) => ...` at the top level (exported or not): the function is the definition (its lines,
; its parameters), named by the variable; one inside a function is local, not listed
(program [(lexical_declaration (variable_declarator name: (identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)] @definition.function))
          (variable_declaration (variable_declarator name: (identifier) @name
            value: [(arrow_function) (function_expression) (generator_function)] @definition.function))
          (export_statement declaration: [
            (lexical_declaration (variable_declarator name: (identifier) @name
              value: [(arrow_function) (function_expression) (generator_function)] @definition.function))
            (variable_declaration (variable_declarator name: (identifier) @name
              value: [(arrow_function) (function_expression) (generator_function)] @definition.function))])])
(lexical_declaration (variable_declarator name: (identifier) @name value: (class) @definition.class))
(field_definition property: (property_identifier) @name) @definition.field
(import_statement source: (string) @import)
(export_statement source: (string) @import)
(call_expression function: (identifier) @_require arguments: (arguments . (string) @import)
  (#eq? @_require "require"))
