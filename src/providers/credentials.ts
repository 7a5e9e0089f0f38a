/**
 * Environment variables that hold provider credentials. One list for everyone who must keep
 * them secret: the shell tool removes them from agents' commands, redaction scrubs their values.
 */
export const CREDENTIAL_VARIABLES: readonly string[] = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY'];
