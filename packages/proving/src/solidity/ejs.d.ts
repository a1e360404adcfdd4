// ejs ships no types; this declares only what the verifier renderer uses.
declare module "ejs" {
  const ejs: { render(template: string, data: Record<string, unknown>): string }
  export default ejs
}
