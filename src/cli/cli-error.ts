/** A usage mistake on the command line: quarry prints its message and exits 2. */
export class CliError extends Error {}
