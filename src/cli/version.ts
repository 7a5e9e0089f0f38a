import pkg from '../../package.json';

/** The package version (also sent to MCP servers as the client's version). */
export const VERSION: string = pkg.version;
