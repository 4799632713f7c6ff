import test from 'ava';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { sourceFiles, src } from '../support/sourceTree.ts';
import { compose } from '../../src/app/application.ts';
import { backplaneApplication } from '../../src/app/defaultApplication.ts';
import { apiDocument } from '../../src/app/modules.ts';

// Audit actions are a catalogue, like the error codes (ADR 0120, amended 2026-11-26): every action
// src/ records is declared by a module's auditActions. The compiler reads each `action` property
// of an object literal (a string, or each branch of a conditional) and each string passed to a
// local helper's `action` parameter; an action it cannot read that way fails too, so none escapes.

interface Found {
  actions: { action: string; at: string }[];
  /** `action` values the compiler cannot read as strings: where they are. */
  unread: string[];
}

/** The audit actions a file records, read from its syntax tree. */
export function actionsOf(file: string, text: string): Found {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Found = { actions: [], unread: [] };
  const at = (node: ts.Node) => `${relative(src, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  // Local helpers with an `action` parameter (mfaChanges' `changed(caller, action)`): name → its position.
  const helpers = new Map<string, number>();
  const helperBodies = new Set<ts.Node>();
  const literals = (node: ts.Expression): string[] | undefined => {
    if (ts.isStringLiteralLike(node)) {
      return [node.text];
    }
    if (ts.isParenthesizedExpression(node)) {
      return literals(node.expression);
    }
    if (ts.isConditionalExpression(node)) {
      const both = [literals(node.whenTrue), literals(node.whenFalse)];
      return both.every((side) => side !== undefined) ? (both as string[][]).flat() : undefined;
    }
    return undefined;
  };
  const visitHelpers = (node: ts.Node): void => {
    const fn = ts.isFunctionDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) ? node : undefined;
    const index = fn?.parameters.findIndex((parameter) => ts.isIdentifier(parameter.name) && parameter.name.text === 'action') ?? -1;
    if (fn && index >= 0) {
      const name = ts.isFunctionDeclaration(fn)
        ? fn.name?.text
        : ts.isVariableDeclaration(fn.parent) && ts.isIdentifier(fn.parent.name)
          ? fn.parent.name.text
          : undefined;
      if (name !== undefined) {
        helpers.set(name, index);
        helperBodies.add(fn);
      }
    }
    ts.forEachChild(node, visitHelpers);
  };
  // `{ action }` inside a helper that takes `action`: its values are read where the helper is called.
  const passesItsParameter = (node: ts.PropertyAssignment | ts.ShorthandPropertyAssignment) => {
    const value = ts.isShorthandPropertyAssignment(node) ? node.name : node.initializer;
    if (!ts.isIdentifier(value) || value.text !== 'action') {
      return false;
    }
    for (let parent: ts.Node | undefined = node.parent; parent; parent = parent.parent) {
      if (helperBodies.has(parent)) {
        return true;
      }
    }
    return false;
  };
  const visit = (node: ts.Node): void => {
    if (
      (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
      ts.isIdentifier(node.name) &&
      node.name.text === 'action' &&
      ts.isObjectLiteralExpression(node.parent)
    ) {
      const values = ts.isPropertyAssignment(node) ? literals(node.initializer) : undefined;
      if (values) {
        found.actions.push(...values.map((action) => ({ action, at: at(node) })));
      } else if (!passesItsParameter(node)) {
        found.unread.push(at(node));
      }
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && helpers.has(node.expression.text)) {
      const argument = node.arguments[helpers.get(node.expression.text)!];
      const values = argument && literals(argument);
      if (values) {
        found.actions.push(...values.map((action) => ({ action, at: at(node) })));
      } else {
        found.unread.push(at(node));
      }
    }
    ts.forEachChild(node, visit);
  };
  visitHelpers(source);
  visit(source);
  return found;
}

// Files that describe audit events rather than record them: the audit module's own listing and schemas, and the port.
const RECORDERS = (file: string) =>
  !relative(src, file).startsWith('modules/audit/') && /recordAudit|AuditEvent\b|RecordAudit/.test(readFileSync(file, 'utf8'));

test("every audit action Backplane records is declared by one of its modules' auditActions", (t) => {
  const catalogue = compose(backplaneApplication).auditActions;
  const files = sourceFiles(src).filter(RECORDERS);
  const found = files.map((file) => actionsOf(file, readFileSync(file, 'utf8')));
  const actions = found.flatMap((file) => file.actions);
  t.deepEqual(
    found.flatMap((file) => file.unread),
    [],
    'an action the compiler cannot read: write it as a string where the event is made',
  );
  t.deepEqual(
    actions.filter(({ action }) => !catalogue.has(action)).map(({ action, at }) => `${action} (${at})`),
    [],
  );
  // The scan sees what the catalogue lists: a declared action nobody records is a stale entry.
  const recorded = new Set(actions.map(({ action }) => action));
  t.deepEqual(
    [...catalogue.keys()].filter((action) => !recorded.has(action)),
    [],
  );
  // Listed in the document beside the problem codes.
  const document = apiDocument(backplaneApplication, '0.0.0') as { 'x-audit-actions': Record<string, string> };
  t.deepEqual(Object.keys(document['x-audit-actions']).sort(), [...catalogue.keys()].sort());
});

test('the scan finds actions in object literals, conditionals and helpers, and refuses what it cannot read', (t) => {
  const text = [
    'const changed = (caller: unknown, action: string) => ({ caller, action });',
    "record({ action: 'a.b.created' });",
    "record({ action: locked ? 'a.b.locked' : 'a.b.unlocked' });",
    "record(changed(me, 'a.b.changed'));",
    'record({ action: someVariable });',
  ].join('\n');
  const found = actionsOf(join(src, 'x.ts'), text);
  t.deepEqual(found.actions.map(({ action }) => action).sort(), ['a.b.changed', 'a.b.created', 'a.b.locked', 'a.b.unlocked']);
  t.deepEqual(found.unread, ['x.ts:5']);
});
