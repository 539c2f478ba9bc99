// Files imported with `with { type: "file" }`: Bun resolves them to a path, and
// `bun build --compile` embeds them in the executable.
declare module "*.gz" {
  const path: string;
  export default path;
}
