// A second, independent reading of JavaScript definitions, for bench/bench_js_reading.py: each file
// parsed with acorn (an ECMAScript parser in JavaScript, no tree-sitter, no ctags), its definitions
// printed as one JSON line per file: {"path", "defs": [[name, line, kind], ...]}.
//
//     node bench/js_definitions.mjs ACORN_MJS FILE...
//
// What counts as a definition (the unit repodoc's pages list; everything else is a local or a value):
// - at the top level of the file: a function or class declaration; a `var`/`let`/`const` whose value is
//   a function, an arrow function or a class expression; `a.b = <function | arrow | class>` (a
//   property given a function: `ZodString.create = (params) => ...`, `exports.f = function`);
// - in the body of such a class: every method, getter, setter, constructor and field, static or not;
// - anywhere (inside functions too): a named function, declared (`function f() {}`) or an expression
//   (`defineGetter(req, 'ip', function ip() {...})`), as ctags and repodoc both count them.
// The line is that of the name (of `b` in `a.b = ...`).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [acornPath, ...files] = process.argv.slice(2);
const acorn = await import(pathToFileURL(acornPath).href);

const isFunction = (node) =>
  node && (node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression");
const isClass = (node) => node && node.type === "ClassExpression";

function classMembers(body, defs) {
  for (const member of body.body) {
    if ((member.type === "MethodDefinition" || member.type === "PropertyDefinition") && !member.computed
        && member.key.type === "Identifier") {
      defs.push([member.key.name, member.key.loc.start.line, member.type === "MethodDefinition" ? "method" : "field"]);
    }
  }
}

function topLevel(statement, defs) {
  if (statement.type === "FunctionDeclaration" && statement.id) {
    defs.push([statement.id.name, statement.id.loc.start.line, "function"]);
  } else if (statement.type === "ClassDeclaration" && statement.id) {
    defs.push([statement.id.name, statement.id.loc.start.line, "class"]);
    classMembers(statement.body, defs);
  } else if (statement.type === "VariableDeclaration") {
    for (const declarator of statement.declarations) {
      if (declarator.id.type !== "Identifier") continue;
      if (isFunction(declarator.init)) {
        defs.push([declarator.id.name, declarator.id.loc.start.line, "function"]);
      } else if (isClass(declarator.init)) {
        defs.push([declarator.id.name, declarator.id.loc.start.line, "class"]);
        classMembers(declarator.init.body, defs);
      }
    }
  } else if (statement.type === "ExpressionStatement" && statement.expression.type === "AssignmentExpression") {
    const { left, right } = statement.expression;
    if (left.type === "MemberExpression" && !left.computed && left.property.type === "Identifier"
        && (isFunction(right) || isClass(right))) {
      defs.push([left.property.name, left.property.loc.start.line, isClass(right) ? "class" : "function"]);
      if (isClass(right)) classMembers(right.body, defs);
    }
  }
}

function namedFunctions(node, defs) {
  const todo = [node];
  while (todo.length) {
    const here = todo.pop();
    if ((here.type === "FunctionDeclaration" || here.type === "FunctionExpression") && here.id) {
      defs.push([here.id.name, here.id.loc.start.line, "function"]);
    }
    for (const value of Object.values(here)) {
      for (const child of Array.isArray(value) ? value : [value]) {
        if (child && typeof child.type === "string") todo.push(child);
      }
    }
  }
}

for (const path of files) {
  const text = readFileSync(path, "utf8");
  const defs = [];
  let error = "";
  try {
    const program = acorn.parse(text, { ecmaVersion: "latest", sourceType: "script", locations: true,
                                        allowHashBang: true, allowReturnOutsideFunction: true });
    for (const statement of program.body) topLevel(statement, defs);
    namedFunctions(program, defs);
  } catch (exc) {
    error = String(exc);
  }
  process.stdout.write(JSON.stringify({ path, defs, error }) + "\n");
}
