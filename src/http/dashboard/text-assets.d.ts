// Dashboard assets imported `with { type: "text" }`: Bun inlines their contents as a string, also in
// the compiled binary. Only these suffixes, so no other import is silently typed as text.
declare module "*.client.js" {
  const source: string;
  export default source;
}
declare module "*.css" {
  const source: string;
  export default source;
}
