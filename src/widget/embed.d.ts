// embed.js runs in visitors' browsers; the Worker imports it as text (wrangler.toml [[rules]]) to serve it.
declare const source: string;
export default source;
