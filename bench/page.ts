// placeholder, filled in below
export {};
