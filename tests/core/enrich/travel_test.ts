import assert from "node:assert/strict";
import {
  countryNumber,
  EARTH_RADIUS_KM,
  haversineKm,
  SubjectMemory,
  travelBetween,
  TravelJudge,
  type TravelPoint,
} from "../../../src/core/enrich/travel.ts";
import { fillTravel, markTravel, travelText } from "../../../src/core/enrich/travel_fields.ts";

const at = (
  subject: string,
  minutes: number,
  latitude: number,
  longitude: number,
  radiusKm = 0,
  country = "",
  countryOnly = false,
) => ({
  subject,
  time: Date.UTC(2026, 10, 20) + minutes * 60_000,
  latitude,
  longitude,
  radiusKm,
  country: countryNumber(country || null),
  countryOnly,
});

Deno.test("haversine: a degree of the equator, a quarter meridian, London to New York", () => {
  assert.equal(EARTH_RADIUS_KM, 6371.0088);
  assert.ok(Math.abs(haversineKm(0, 0, 0, 1) - (2 * Math.PI * EARTH_RADIUS_KM) / 360) < 1e-9);
  assert.ok(Math.abs(haversineKm(0, 0, 90, 0) - (Math.PI * EARTH_RADIUS_KM) / 2) < 1e-9);
  assert.equal(haversineKm(10, 20, 10, 20), 0);
  const km = haversineKm(51.5074, -0.1278, 40.7128, -74.006);
  assert.ok(km > 5565 && km < 5575, `${km}`);
  const across = haversineKm(0, 179.5, 0, -179.5); // across the date line: 1 degree, not 359
  assert.ok(Math.abs(across - haversineKm(0, 0, 0, 1)) < 1e-9, `${across}`);
});

Deno.test("travel speed: the distance less both accuracy radii (not below 0), over the time", () => {
  // 1 degree of the equator (111.2 km) in an hour, radii 0: 111 km/h.
  assert.deepEqual(travelBetween(at("a", 0, 0, 0), at("a", 60, 0, 1), 1000), {
    km: 111.2,
    kmh: 111,
    impossible: false,
  });
  // The same with radii 50 and 40: 21.2 km apart at most.
  assert.equal(travelBetween(at("a", 0, 0, 0, 50), at("a", 60, 0, 1, 40), 1000).kmh, 21);
  // Radii wider than the distance: the two may be one place.
  assert.deepEqual(travelBetween(at("a", 0, 0, 0, 100), at("a", 1, 0, 1, 100), 1000), {
    km: 111.2,
    kmh: 0,
    impossible: false,
  });
  // 10 degrees (1,111.9 km) in an hour: faster than 1,000 km/h, slower than 2,000.
  assert.equal(travelBetween(at("a", 0, 0, 0), at("a", 60, 0, 10), 1000).impossible, true);
  assert.equal(travelBetween(at("a", 0, 0, 0), at("a", 60, 0, 10), 2000).impossible, false);
});

Deno.test("travel: an answer placed only to its country could be anywhere in it, not beside another country", () => {
  // The United States' centre (country only, radius 1,000 km), then Westfield, MA, an hour later.
  const centre = at("a", 0, 37.751, -97.822, 1000, "US", true);
  const westfield = at("a", 60, 42.1251, -72.7495, 10, "US");
  assert.deepEqual(travelBetween(centre, westfield, 1000), {
    km: 2183.8,
    kmh: 0,
    impossible: false,
  });
  assert.deepEqual(travelBetween(westfield, centre, 1000).impossible, false);
  // The same centre beside London ten minutes later: the radius counts, and it is impossible.
  const london = at("a", 10, 51.5074, -0.1278, 50, "GB");
  assert.equal(travelBetween(centre, london, 1000).impossible, true);
  // Both placed to cities in one country: the distance counts as usual.
  const kansasCity = at("a", 0, 39.0997, -94.5786, 10, "US");
  assert.equal(travelBetween(kansasCity, westfield, 1000).impossible, true);
});

Deno.test("travel time: an earlier record counts the absolute difference; under a second counts as one", () => {
  const forward = travelBetween(at("a", 0, 0, 0), at("a", 60, 0, 1), 1000);
  const backward = travelBetween(at("a", 60, 0, 0), at("a", 0, 0, 1), 1000);
  assert.deepEqual(backward, forward);
  // The same second: 111.2 km in one second is 400,299 km/h, not infinite.
  const same = travelBetween(at("a", 0, 0, 0), at("a", 0, 0, 1), 1000);
  assert.equal(same.kmh, Math.round(haversineKm(0, 0, 0, 1) * 3600));
  assert.equal(same.impossible, true);
  const half = { ...at("a", 0, 0, 1), time: at("a", 0, 0, 0).time + 500 };
  assert.deepEqual(travelBetween(at("a", 0, 0, 0), half, 1000), same);
  // The same place at the same time: 0 km/h.
  assert.equal(travelBetween(at("a", 0, 5, 5), at("a", 0, 5, 5), 1000).kmh, 0);
  assert.equal(travelBetween(at("a", 0, 5, 5), at("a", 0, 5, 5), 1000).impossible, false);
});

Deno.test("travel judge: a subject's first record has no travel; each next one is from its previous", () => {
  const judge = new TravelJudge(1000, 10);
  assert.equal(judge.next(at("alice", 0, 0, 0)), null);
  assert.equal(judge.next(at("bob", 0, 0, 50)), null);
  assert.equal(judge.next(at("alice", 60, 0, 1))!.kmh, 111);
  assert.equal(judge.next(at("alice", 70, 0, 50))!.impossible, true, "from alice's previous");
  assert.equal(judge.next(at("bob", 600, 0, 51))!.impossible, false);
  assert.deepEqual(judge.counts(), {
    judged: 3,
    impossible: 1,
    subjects: 2,
    forgotten: 0,
    limit: 10,
  });
});

Deno.test("subjects remembered: 2,000,000 distinct subjects stay within a bound of 1,000, least recently seen forgotten first", () => {
  const memory = new SubjectMemory(1000);
  const point = {
    subject: "",
    time: 0,
    latitude: 1,
    longitude: 2,
    radiusKm: 3,
    country: countryNumber("US"),
    countryOnly: true,
  };
  for (let i = 0; i < 2_000_000; i++) {
    point.subject = `user${i}`;
    point.time = i;
    // user0 is seen every 500 subjects: it is never the least recently seen.
    if (i % 500 === 0) {
      const previous = memory.swap({ ...point, subject: "user0" });
      if (i > 0) assert.equal(previous?.time, i - 500);
    }
    memory.swap(point);
    assert.ok(memory.size <= 1000);
  }
  assert.equal(memory.size, 1000);
  assert.equal(memory.forgotten, 2_000_000 - 1000);
  const kept = memory.swap({ ...point, subject: "user1999999", time: 5 });
  assert.deepEqual(kept, {
    time: 1_999_999,
    latitude: 1,
    longitude: 2,
    radiusKm: 3,
    country: countryNumber("US"),
    countryOnly: true,
  });
  assert.equal(memory.swap({ ...point, subject: "user1998999" }), null, "forgotten");
  assert.notEqual(memory.swap({ ...point, subject: "user0" }), null, "seen recently: kept");
});

Deno.test("subjects remembered: with a bound of 2, the third subject pushes out the least recent", () => {
  const judge = new TravelJudge(1000, 2);
  judge.next(at("a", 0, 0, 0));
  judge.next(at("b", 0, 0, 0));
  judge.next(at("a", 1, 0, 0)); // a is now the most recent
  judge.next(at("c", 0, 0, 0)); // b goes
  assert.equal(judge.next(at("b", 2, 0, 0)), null, "b was forgotten: a first record again");
  assert.notEqual(judge.next(at("b", 3, 0, 0)), null);
  assert.equal(judge.counts().forgotten, 2); // b, then a (when b came back)
});

Deno.test("travel marks: filled in input order, CSV cells or JSON members, as judged at once", () => {
  const points: TravelPoint[] = [at("a", 0, 0, 0), at("a", 60, 0, 1), at("b", 0, 0, 0)];
  for (const shape of [{ delimiter: "," }, { delimiter: "\t" }, { delimiter: null }]) {
    const marked = points.map((p, i) => `r${i}{${markTravel(p)}}\n`).join("");
    const judge = new TravelJudge(1000, 10);
    const direct = new TravelJudge(1000, 10);
    const expected = points.map((p, i) => `r${i}{${travelText(direct.next(p), shape)}}\n`).join("");
    assert.equal(fillTravel(marked, judge, shape), expected);
  }
  assert.equal(travelText(null, { delimiter: "," }), ",,,");
  assert.equal(
    travelText({ km: 1.5, kmh: 3, impossible: true }, { delimiter: null }),
    '"travel_km":1.5,"travel_kmh":3,"impossible_travel":true',
  );
  const judge = new TravelJudge(1000, 10);
  assert.equal(fillTravel("no marks here\n", judge, { delimiter: "," }), "no marks here\n");
  assert.throws(() => fillTravel("a\uDFFF[1]", judge, { delimiter: "," }), /unclosed travel mark/);
});
