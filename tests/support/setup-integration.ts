// Runs before each integration test file, in its worker, before the file's imports: the
// Inngest client reads INNGEST_DEV when it is created, so the sink must exist first.
import { afterAll } from "vitest";
import { startEventSink } from "./event-sink";

const sink = await startEventSink();
process.env.INNGEST_DEV = sink.url;
(globalThis as { __eventSink?: typeof sink }).__eventSink = sink;
afterAll(() => sink.close());
