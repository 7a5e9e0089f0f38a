/** ur-agent delegates to scribe and scout in parallel; each writes two files (four requests). */
export const TWO_AGENTS = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Delegating to scribe and scout."
    toolCalls:
      - { name: communicator, input: { targetId: scribe, sessionName: files, message: "write a1 and a2" } }
      - { name: communicator, input: { targetId: scout, sessionName: files, message: "write b1 and b2" } }
  - agent: scribe
    first: true
    text: "Writing a1 and a2."
    toolCalls:
      - { name: file_write, input: { path: a1.txt, content: "alpha one\\n" } }
      - { name: file_write, input: { path: a2.txt, content: "alpha two\\n" } }
  - agent: scout
    first: true
    text: "Writing b1 and b2."
    toolCalls:
      - { name: file_write, input: { path: b1.txt, content: "bravo one\\n" } }
      - { name: file_write, input: { path: b2.txt, content: "bravo two\\n" } }
  - { agent: scribe, on: tool-result, repeat: true, text: "scribe finished" }
  - { agent: scribe, on: tool-error, repeat: true, text: "scribe finished with a refusal" }
  - { agent: scout, on: tool-result, repeat: true, text: "scout finished" }
  - { agent: scout, on: tool-error, repeat: true, text: "scout finished with a refusal" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "All delegates answered." }
  - { agent: ur-agent, on: message, repeat: true, text: "ur-agent heard you." }
`;
