/**
 * The page's world map: Natural Earth countries (world-atlas, 1:110m) projected
 * once to one SVG path. The projection is the plain equirectangular one the
 * browser script uses to place markers: x = (lon + 180) / 360 · W,
 * y = (90 − lat) / 180 · H.
 */

import { geoEquirectangular, geoPath } from "d3-geo";
import { feature, mesh } from "topojson-client";
import world from "world-atlas/countries-110m.json" with { type: "json" };

export const MAP_WIDTH = 960;
export const MAP_HEIGHT = 480;

/** The map as a standalone SVG document, with its own light and dark colours. */
export function buildWorldSvg(): string {
  const projection = geoEquirectangular()
    .scale(MAP_WIDTH / (2 * Math.PI))
    .translate([MAP_WIDTH / 2, MAP_HEIGHT / 2]);
  const path = geoPath(projection).digits(1);
  // deno-lint-ignore no-explicit-any
  const topology = world as any;
  const land = path(feature(topology, topology.objects.countries)) ?? "";
  const borders =
    path(mesh(topology, topology.objects.countries, (a: unknown, b: unknown) => a !== b)) ?? "";
  if (!land) throw new Error("The world map has no geometry");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${MAP_WIDTH} ${MAP_HEIGHT}">` +
    `<style>.l{fill:#cfd8dc}.b{fill:none;stroke:#fff;stroke-width:.5}` +
    `@media (prefers-color-scheme:dark){.l{fill:#37474f}.b{stroke:#1e272c}}</style>` +
    `<path class="l" d="${land}"/><path class="b" d="${borders}"/></svg>`;
}
