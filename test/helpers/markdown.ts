// The project's Markdown as its readers see it: parsed by markdown-it, the parser of VS Code's
// Markdown preview and of vsce (which renders the README for the Extensions view and the
// Marketplace). The docs tests find headings, tables and links in these tokens, never by matching
// lines, so a fence left open that swallows the rest of a page fails them instead of passing unseen.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import MarkdownIt from 'markdown-it';

type Token = MarkdownIt.Token;

export const ROOT = path.resolve(__dirname, '..', '..');

/** VS Code's preview and vsce both allow HTML; tables are on in markdown-it's default preset. */
const parser = new MarkdownIt({ html: true });

export interface MarkdownDoc {
  /** The path from the repository's root, with `/`. */
  readonly name: string;
  readonly source: string;
  readonly lines: readonly string[];
  readonly tokens: readonly Token[];
}

export interface Heading {
  readonly level: number;
  /** The heading's Markdown source, without the `#`s: "A server entry in `mcpHost.servers`". */
  readonly source: string;
  /** Its text as it renders, code spans and link texts included: what the anchor is made of. */
  readonly text: string;
  /** The line it is on, from 0. */
  readonly line: number;
}

const cache = new Map<string, MarkdownDoc>();

/** Markdown text, parsed; `name` says where it comes from in messages. */
export function parseMarkdown(name: string, source: string): MarkdownDoc {
  return { name, source, lines: source.split('\n'), tokens: parser.parse(source, {}) };
}

/** A Markdown file of the repository, parsed (once per run). */
export function readMarkdown(name: string): MarkdownDoc {
  let doc = cache.get(name);
  if (!doc) {
    doc = parseMarkdown(name, fs.readFileSync(path.join(ROOT, name), 'utf8'));
    cache.set(name, doc);
  }
  return doc;
}

/** What an inline token renders as text: text, code spans, the text of links and images. */
function plainText(inline: Token): string {
  return (inline.children ?? [])
    .map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : c.type === 'image' ? plainText(c) : ''))
    .join('');
}

export function headings(doc: MarkdownDoc): Heading[] {
  const found: Heading[] = [];
  doc.tokens.forEach((t, i) => {
    if (t.type !== 'heading_open') return;
    const inline = doc.tokens[i + 1];
    found.push({ level: Number(t.tag.slice(1)), source: inline.content, text: plainText(inline), line: t.map![0] });
  });
  return found;
}

/** GitHub's and VS Code's anchor for a heading: lower case, punctuation dropped, spaces as `-`. */
function slug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\s-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page's headings get; a repeated one gets `-1`, `-2`, … as GitHub and VS Code add. */
export function anchors(doc: MarkdownDoc): Set<string> {
  const seen = new Set<string>();
  for (const h of headings(doc)) {
    const base = slug(h.text);
    let anchor = base;
    for (let n = 1; seen.has(anchor); n++) anchor = `${base}-${n}`;
    seen.add(anchor);
  }
  return seen;
}

export interface Section {
  /** The source lines under the heading, as one text. */
  readonly text: string;
  /** The body rows of every table in it, each row its cells' Markdown source, trimmed. */
  readonly rows: readonly (readonly string[])[];
}

/**
 * The part of a page under a heading, written as in the source ("## Commands"): up to the next
 * heading of the same or a higher level, or with `own`, up to the next heading of any level. The
 * heading must be a heading as the page renders, not a line inside a code block.
 */
export function section(doc: MarkdownDoc, heading: string, own = false): Section {
  const m = /^(#+) (.+)$/.exec(heading);
  assert.ok(m, `"${heading}" is not written as a heading`);
  const level = m[1].length;
  const all = headings(doc);
  const at = all.findIndex((h) => h.level === level && h.source === m[2]);
  assert.ok(
    at >= 0,
    all.some((h) => h.source === m[2])
      ? `${doc.name}: "${m[2]}" is a heading of another level than ${level}`
      : `${doc.name} has no heading "${heading}" as it renders${doc.lines.some((l) => l.trim() === heading) ? ' (the line is there, inside a code block or other block: is a fence above it left open?)' : ''}`,
  );
  const next = all.slice(at + 1).find((h) => own || h.level <= level);
  const start = all[at].line + 1;
  const end = next ? next.line : doc.lines.length;
  return { text: doc.lines.slice(start, end).join('\n'), rows: tableRows(doc, start, end) };
}

/** The cells of each body row of every table that starts between two lines. */
function tableRows(doc: MarkdownDoc, start: number, end: number): string[][] {
  const rows: string[][] = [];
  let inBody = false;
  let row: string[] | undefined;
  for (const t of doc.tokens) {
    if (t.type === 'tbody_open') inBody = t.map![0] >= start && t.map![0] < end;
    else if (t.type === 'tbody_close') inBody = false;
    else if (inBody && t.type === 'tr_open') row = [];
    else if (row && t.type === 'inline') row.push(t.content.trim());
    else if (row && t.type === 'tr_close') {
      rows.push(row);
      row = undefined;
    }
  }
  return rows;
}

/** The code text of each row's first cell, where that cell is one code span (`mcpHost.trace`). */
export function firstCodeCells(rows: Section['rows']): string[] {
  return rows.map((r) => /^`([^`]+)`$/.exec(r[0])?.[1]).filter((name): name is string => name !== undefined);
}

export interface Link {
  readonly kind: 'link' | 'image';
  /** As markdown-it normalised it: non-ASCII and spaces percent-encoded. */
  readonly target: string;
  readonly line: number;
}

/** Every link and image of a page as it renders (none from inside code), with its line. */
export function links(doc: MarkdownDoc): Link[] {
  const found: Link[] = [];
  // A table cell's inline token has no line of its own: it is on its row's.
  let line = 0;
  const visit = (tokens: readonly Token[]) => {
    for (const t of tokens) {
      if (t.map) line = t.map[0];
      if (t.type === 'link_open') found.push({ kind: 'link', target: t.attrGet('href') ?? '', line });
      if (t.type === 'image') found.push({ kind: 'image', target: t.attrGet('src') ?? '', line });
      if (t.children) visit(t.children);
    }
  };
  visit(doc.tokens);
  return found;
}
