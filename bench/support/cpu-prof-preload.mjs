// Preloaded into the app by `npm run bench lifecycle -- --cpu-prof` (NODE_OPTIONS=--import,
// since node refuses --cpu-prof there): profiles the process with the inspector and writes
// <CPU_PROF_DIR>/app-<pid>.cpuprofile when it exits (next start exits on SIGTERM).
import fs from "node:fs";
import inspector from "node:inspector";
import path from "node:path";

const dir = process.env.CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  session.post("Profiler.start");
  process.on("exit", () => {
    // The in-process session answers synchronously, so this runs to the end inside `exit`.
    session.post("Profiler.stop", (error, result) => {
      if (error || !result) return;
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `app-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
