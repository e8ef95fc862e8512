; Rust definitions (after tree-sitter-rust's queries/tags.scm, with fields, trait functions, impls)
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(type_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(impl_item type: (_) @name) @definition.impl
; fields of structs and unions (not of an enum's variant: `Named { name: String }`)
([(struct_item body: (field_declaration_list (field_declaration name: (field_identifier) @name) @definition.field))
  (union_item body: (field_declaration_list (field_declaration name: (field_identifier) @name) @definition.field))])
; a trait's associated types (`type Output;`)
(associated_type name: (type_identifier) @name) @definition.type
(mod_item) @import
(use_declaration argument: (_) @import)
