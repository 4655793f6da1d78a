// A small subset of the CEL expressions Inngest puts in function configs:
//   cancelOn / waitForEvent:  event.data.leaseId == async.data.leaseId
//   onFailure trigger:        event.data.function_id == 'app-fn'
//   trigger `if`, idempotency / concurrency keys: event.data.userId
// Supported: dotted paths and ['x'] indexing rooted at a known variable, string /
// number / bool / null literals, == and !=, && and ||, parentheses. Anything else
// throws at compile time, so the caller can fail loudly instead of guessing.

export type Vars = Record<string, unknown>;
export type CompiledExpression = { source: string; evaluate(vars: Vars): unknown };

/** Marks a path that does not exist; CEL would raise, and a raised error never matches. */
const MISSING: unique symbol = Symbol("missing");

type Node =
  | { kind: "lit"; value: unknown }
  | { kind: "path"; root: string; keys: string[] }
  | { kind: "bin"; op: "==" | "!=" | "&&" | "||"; left: Node; right: Node };

type Token = { t: "str" | "num" | "id" | "op"; v: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src.charAt(i);
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'" || c === '"') {
      let s = "";
      i++;
      while (i < src.length && src.charAt(i) !== c) {
        if (src.charAt(i) === "\\") i++;
        s += src.charAt(i++);
      }
      if (i >= src.length) throw new Error(`unterminated string in expression: ${src}`);
      i++;
      out.push({ t: "str", v: s });
    } else if (/[0-9]/.test(c) || (c === "-" && /[0-9]/.test(src.charAt(i + 1)))) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(src.slice(i));
      out.push({ t: "num", v: m![0] });
      i += m![0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      out.push({ t: "id", v: m![0] });
      i += m![0].length;
    } else {
      const two = src.slice(i, i + 2);
      if (["==", "!=", "&&", "||"].includes(two)) {
        out.push({ t: "op", v: two });
        i += 2;
      } else if ("().[]".includes(c)) {
        out.push({ t: "op", v: c });
        i++;
      } else {
        throw new Error(`unsupported character "${c}" in expression: ${src}`);
      }
    }
  }
  return out;
}

/**
 * Compile `source`; only the variable names in `roots` may start a path (e.g.
 * ["event", "async"]). Throws a readable Error on anything outside the subset.
 */
export function compileExpression(source: string, roots: string[]): CompiledExpression {
  const toks = tokenize(source);
  let pos = 0;
  const peek = () => toks[pos];
  const unsupported = (what: string): never => {
    throw new Error(`unsupported expression (${what}): ${source} — inngest-local handles paths, literals, ==, !=, &&, ||`);
  };
  const expect = (v: string) => {
    const tok = toks[pos++];
    if (!tok || tok.v !== v) unsupported(`expected "${v}"`);
  };

  const parseOperand = (): Node => {
    const tok = toks[pos++];
    if (!tok) return unsupported("unexpected end");
    if (tok.t === "str") return { kind: "lit", value: tok.v };
    if (tok.t === "num") return { kind: "lit", value: Number(tok.v) };
    if (tok.t === "op" && tok.v === "(") {
      const inner = parseOr();
      expect(")");
      return inner;
    }
    if (tok.t !== "id") return unsupported(`unexpected "${tok.v}"`);
    if (tok.v === "true" || tok.v === "false") return { kind: "lit", value: tok.v === "true" };
    if (tok.v === "null") return { kind: "lit", value: null };
    if (!roots.includes(tok.v)) return unsupported(`unknown variable "${tok.v}"`);
    const keys: string[] = [];
    for (;;) {
      const next = peek();
      if (next?.t === "op" && next.v === ".") {
        pos++;
        const id = toks[pos++];
        if (!id || id.t !== "id") return unsupported("expected a field name after '.'");
        keys.push(id.v);
      } else if (next?.t === "op" && next.v === "[") {
        pos++;
        const key = toks[pos++];
        if (!key || (key.t !== "str" && key.t !== "num")) return unsupported("only literal [index] is supported");
        keys.push(key.v);
        expect("]");
      } else if (next?.t === "op" && next.v === "(") {
        return unsupported("function calls");
      } else {
        break;
      }
    }
    return { kind: "path", root: tok.v, keys };
  };
  const parseCmp = (): Node => {
    const left = parseOperand();
    const next = peek();
    if (next?.t === "op" && (next.v === "==" || next.v === "!=")) {
      pos++;
      return { kind: "bin", op: next.v, left, right: parseOperand() };
    }
    return left;
  };
  const parseAnd = (): Node => {
    let left = parseCmp();
    while (peek()?.v === "&&") {
      pos++;
      left = { kind: "bin", op: "&&", left, right: parseCmp() };
    }
    return left;
  };
  function parseOr(): Node {
    let left = parseAnd();
    while (peek()?.v === "||") {
      pos++;
      left = { kind: "bin", op: "||", left, right: parseAnd() };
    }
    return left;
  }

  const ast = parseOr();
  if (pos < toks.length) unsupported(`unexpected "${toks[pos]!.v}"`);

  const evalNode = (n: Node, vars: Vars): unknown => {
    if (n.kind === "lit") return n.value;
    if (n.kind === "path") {
      let cur: unknown = vars[n.root];
      for (const k of n.keys) {
        if (cur === null || typeof cur !== "object" || !(k in cur)) return MISSING;
        cur = (cur as Record<string, unknown>)[k];
      }
      return cur === undefined ? MISSING : cur;
    }
    if (n.op === "&&") return evalNode(n.left, vars) === true && evalNode(n.right, vars) === true;
    if (n.op === "||") return evalNode(n.left, vars) === true || evalNode(n.right, vars) === true;
    const a = evalNode(n.left, vars);
    const b = evalNode(n.right, vars);
    // A missing field is an evaluation error in CEL: the comparison matches nothing
    // (so two runs without a leaseId never cancel each other).
    if (a === MISSING || b === MISSING) return false;
    const eq = a === b || (typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b));
    return n.op === "==" ? eq : !eq;
  };

  return {
    source,
    evaluate: (vars) => {
      const v = evalNode(ast, vars);
      return v === MISSING ? undefined : v;
    },
  };
}
