// board.js runs in display screens' browsers; the Worker imports it as text (wrangler.toml [[rules]]) to serve it.
declare const source: string;
export default source;
