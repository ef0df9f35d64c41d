// Every function of the app records a probe: a marker string literal the
// test finds in the minified output to place a frame inside the function.
export const probes = [];

export function record(marker) {
  probes.push(marker);
}
