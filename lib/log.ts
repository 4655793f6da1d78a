// One JSON line per notable event, on stdout/stderr, so operators can grep and ship them.
type Fields = Record<string, unknown>;

function line(level: "info" | "warn", message: string, fields: Fields) {
  const text = JSON.stringify({ at: new Date().toISOString(), level, msg: message, ...fields });
  if (level === "warn") console.warn(text);
  else console.info(text);
}

export const log = {
  info: (message: string, fields: Fields = {}) => line("info", message, fields),
  warn: (message: string, fields: Fields = {}) => line("warn", message, fields),
};
