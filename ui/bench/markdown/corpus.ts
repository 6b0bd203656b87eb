// Agent-like Markdown of a given size (headings, lists, code, tables, prose), for the benches.
export function corpus(bytes: number): string {
  const parts: ((i: number) => string)[] = [
    (i) =>
      `## Step ${i}\n\nI looked at \`src/module_${i}.rs\` and found **${i % 5} issues**. See [the docs](https://example.com/${i}).\n\n`,
    (i) => `- first point about item ${i}\n- second point, with *emphasis*\n  - nested detail\n\n`,
    (i) =>
      '```rust\nfn handler_' +
      i +
      '(req: &Request) -> Result<Response, Error> {\n    let body = req.body()?;\n    Ok(Response::new(body.len()))\n}\n```\n\n',
    (i) => `| file | lines |\n|---|---:|\n| a_${i}.ts | ${i * 3} |\n| b_${i}.ts | ${i * 7} |\n\n`,
    (i) =>
      `A longer paragraph number ${i} that explains what the agent is about to do next, why it matters, and what could go wrong, in plain prose without much markup at all.\n\n`,
  ];
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += parts[i % parts.length](i);
  return s.slice(0, bytes);
}
