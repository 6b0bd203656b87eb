// The hostile corpus of issue 12: payloads that made the sanitizer swallow the agent's text after
// them (an unclosed `<style>` turns the rest of the message into style-sheet text, which the
// sanitizer then removes with the element), each followed by sentinel sentences that must stay
// visible. Shared by ui/src/lib/markdown.test.ts (jsdom) and hostile.spec.ts (Chromium under the
// app's CSP), so both test the same payloads. No imports: both sides load it as is.

/** One payload and what must still be read after it. */
export interface SentinelCase {
  name: string;
  /** The agent's whole message. */
  message: string;
  /** Sentences of `message` that must appear in the rendered text, whitespace collapsed. */
  sentinels: string[];
  /** Where the payload starts in `message` and how long it is (to split inside it). */
  at: number;
  length: number;
}

/**
 * The payloads. `js` is what a payload would run (the Playwright spec passes code that records a
 * hit). Raw-text and RCDATA elements (the HTML parser reads everything after them as text up to
 * their end tag), elements DOMPurify removes with their content, foreign content, unclosed
 * comments/CDATA/attribute quotes, and the usual script vectors; several also inside the Markdown
 * constructs that lex their content separately (list item, quote, table cell, inline code tags).
 */
export function sentinelPayloads(js = 'alert(1)'): [string, string][] {
  return [
    ['unclosed <style>', '<style>body{display:none}'],
    ['closed <style>', '<style>p{color:red}</style>'],
    ['unclosed <script>', `<script>${js}`],
    ['closed <script>', `<script>${js}</script>`],
    ['unclosed <textarea>', '<textarea>'],
    ['unclosed <title>', '<title>'],
    ['unclosed <xmp>', '<xmp>'],
    ['<plaintext>', '<plaintext>'],
    ['unclosed <noscript>', '<noscript>'],
    ['unclosed <iframe>', '<iframe src="https://evil.example/frame">'],
    ['unclosed <noembed>', '<noembed>'],
    ['unclosed <noframes>', '<noframes>'],
    ['unclosed <template>', '<template>'],
    ['<svg><style>', '<svg><style>'],
    ['closed <svg> with text', '<svg><text>svg</text></svg>'],
    ['unclosed <math>', '<math><mi>x</mi>'],
    ['unclosed comment', '<!-- hidden'],
    ['closed comment', '<!-- note -->'],
    ['unclosed CDATA', '<![CDATA[ data'],
    ['unclosed <![', '<![ x'],
    ['processing instruction', '<?php echo 1;'],
    ['declaration', '<!DOCTYPE html>'],
    ['unclosed <select>', '<select><option>one'],
    ['unclosed <object>', '<object data="x.swf">'],
    ['unclosed <video>', '<video>'],
    ['unclosed <audio>', '<audio>'],
    ['unclosed <head>', '<head>'],
    ['unclosed <frameset>', '<frameset>'],
    ['unclosed attribute quote', '<a href="x'],
    ['unclosed attribute quote on an allowed tag', '<p title="x'],
    ['onerror image', `<img src=x onerror="${js}">`],
    ['javascript: link', `[click](javascript:${js})`],
    ['javascript: link, HTML', `<a href="javascript:${js}">x</a>`],
    ['nested <div><style>', '<div><style>'],
    ['<pre><style>', '<pre><style>'],
    ['<table><style>', '<table><tr><td><style>'],
    ['inline <code> then a broken tag', '<code><a href="x'],
    ['inline <kbd> then a raw <', '<kbd>a <b'],
    ['list item <style>', '- <style>'],
    ['quote <style>', '> <style>'],
    ['table cell <style>', '| a | b |\n|---|---|\n| <style> |'],
    ['<style> in a link', '[<style>](https://example.com)'],
  ];
}

/** Each payload at a line's start (an HTML block) and inside a paragraph (inline HTML). */
export function sentinelCases(js = 'alert(1)'): SentinelCase[] {
  const cases: SentinelCase[] = [];
  sentinelPayloads(js).forEach(([name, payload], i) => {
    for (const inline of [false, true]) {
      const n = `${i}${inline ? 'i' : 'b'}`;
      const s = (part: string) => `SENTINEL-${n}${part} is still here.`;
      const before = inline ? `Look: ` : `First line of the answer.\n\n`;
      const sentinels = [s('a'), s('b'), s('c')];
      cases.push({
        name: `${name}${inline ? ', inline' : ''}`,
        message: `${before}${payload} ${sentinels[0]}\n${sentinels[1]}\n\n${sentinels[2]}\n`,
        sentinels,
        at: before.length,
        length: payload.length,
      });
    }
  });
  return cases;
}

/**
 * Ways to stream a case: fixed sizes, split in the middle of the payload (inside its tag), and
 * split at every newline (just before and just after it).
 */
export function sentinelChunkings(c: SentinelCase): [string, string[]][] {
  const sized = (size: number) => {
    const parts: string[] = [];
    for (let i = 0; i < c.message.length; i += size) parts.push(c.message.slice(i, i + size));
    return parts;
  };
  const cuts = (points: number[]) => {
    const sorted = [...new Set(points)].filter((p) => p > 0 && p < c.message.length);
    sorted.sort((a, b) => a - b);
    return [0, ...sorted].map((p, k) => c.message.slice(p, sorted[k] ?? c.message.length));
  };
  const newlines: number[] = [];
  for (let i = c.message.indexOf('\n'); i >= 0; i = c.message.indexOf('\n', i + 1))
    newlines.push(i, i + 1);
  return [
    ['1 character', sized(1)],
    ['3 characters', sized(3)],
    ['inside the tag', cuts([c.at + 1, c.at + Math.floor(c.length / 2), c.at + c.length - 1])],
    ['at the newlines', cuts(newlines)],
  ];
}
