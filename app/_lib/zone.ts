// The cookie that tells the server the browser's time zone (see app/_lib/viewer.ts).
export const ZONE_COOKIE = "cc_tz";
