/**
 * Impossible travel: for each subject (a user, an account, a session), how
 * far and how fast it moved since its previous record, and whether faster than
 * a traveller can.
 *
 * - The distance is the great circle between the two answers' coordinates
 *   (haversine, on a sphere of the Earth's mean radius, 6,371.0088 km).
 * - The speed is taken over that distance less both answers' accuracy radii
 *   (not below 0): the two places could be that much closer. An unknown radius
 *   counts as 0.
 * - An answer placed only to its country (no city: GeoLite2 puts such an
 *   address at the country's centre, 8.8.8.8 in Kansas) could be anywhere in
 *   that country: beside a record in the same country, the distance left after
 *   the radii is 0. Beside another country its radius counts as above.
 * - Records come in time order for each subject; one earlier than its
 *   predecessor is compared over the absolute difference. A difference under a
 *   second counts as one second: most logs write whole seconds, so two records
 *   of the same second may be up to a second apart (and no speed is infinite).
 * - Impossible: faster than the speed given (km/h).
 *
 * The subjects remembered are bounded: past the bound, the least recently
 * seen is forgotten first (its next record is then a first one), and counted.
 */

/** The Earth's mean radius (IUGG), km. */
export const EARTH_RADIUS_KM = 6371.0088;

/** An airliner's cruising speed, km/h: faster than this between two logins is impossible travel. */
export const DEFAULT_TRAVEL_SPEED = 1000;

/** Subjects remembered by default (about 140 MB with keys like `user1234567`). */
export const DEFAULT_TRAVEL_SUBJECTS = 1_000_000;

/** Where a subject was at a time: what a record tells travel. */
export interface TravelPoint {
  subject: string;
  /** Epoch ms. */
  time: number;
  latitude: number;
  longitude: number;
  /** The answer's accuracy radius, km (0: unknown). */
  radiusKm: number;
  /** The country as a number (countryNumber; 0: unknown). */
  country: number;
  /** Placed only to the country (no city): it could be anywhere in it. */
  countryOnly: boolean;
}

/** A record's travel from its subject's previous one; null for a subject's first. */
export interface TravelVerdict {
  /** The great-circle distance, km (to 0.1). */
  km: number;
  /** The speed after both accuracy radii, km/h (whole). */
  kmh: number;
  impossible: boolean;
}

const RAD = Math.PI / 180;
const HOUR_MS = 3_600_000;
/** The shortest time between two records: a second (see the module comment). */
const MIN_MS = 1000;

/** The great-circle distance between two points, km (haversine). */
export function haversineKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 +
    Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** The judgement of `point` against `previous` (the same subject's last record). */
export function travelBetween(
  previous: Omit<TravelPoint, "subject">,
  point: Omit<TravelPoint, "subject">,
  speedKmh: number,
): TravelVerdict {
  const km = haversineKm(previous.latitude, previous.longitude, point.latitude, point.longitude);
  const sameCountryVague = (previous.countryOnly || point.countryOnly) && previous.country !== 0 &&
    previous.country === point.country;
  const apart = sameCountryVague ? 0 : Math.max(0, km - previous.radiusKm - point.radiusKm);
  const hours = Math.max(Math.abs(point.time - previous.time), MIN_MS) / HOUR_MS;
  const kmh = apart / hours;
  return { km: Math.round(km * 10) / 10, kmh: Math.round(kmh), impossible: kmh > speedKmh };
}

/** Fields kept per subject, in one Float64Array: time, latitude, longitude, radius, country (negative: only the country). */
const FIELDS = 5;

/** A two-letter country code as a number (0 for none): kept in the subjects' Float64Array. */
export function countryNumber(code: string | null): number {
  return code !== null && code.length === 2 ? code.charCodeAt(0) * 256 + code.charCodeAt(1) : 0;
}

/** Slot 0 is the recency list's sentinel: `next[0]` is the most recent slot, `prev[0]` the least. */
const HEAD = 0;

/**
 * Each subject's last point, for at most `limit` subjects, the least recently seen
 * forgotten first. A Map from subject to slot; the points in one Float64Array and the
 * recency order a doubly linked list in two Int32Arrays (no object per subject; all grown
 * by doubling up to the limit). Every operation is O(1).
 */
export class SubjectMemory {
  readonly limit: number;
  /** Subjects pushed out to make room. */
  forgotten = 0;
  readonly #slots = new Map<string, number>();
  #subjects: string[] = [""];
  #points = new Float64Array(16 * FIELDS);
  #prev = new Int32Array(16);
  #next = new Int32Array(16);

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`SubjectMemory limit must be a positive integer, got ${limit}`);
    }
    this.limit = limit;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Remembers `point` as its subject's last; returns the one it replaces (null: none kept). */
  swap(point: TravelPoint): Omit<TravelPoint, "subject"> | null {
    let slot = this.#slots.get(point.subject);
    let previous: Omit<TravelPoint, "subject"> | null = null;
    if (slot !== undefined) {
      const p = this.#points;
      const at = slot * FIELDS;
      previous = {
        time: p[at]!,
        latitude: p[at + 1]!,
        longitude: p[at + 2]!,
        radiusKm: p[at + 3]!,
        country: Math.abs(p[at + 4]!),
        countryOnly: p[at + 4]! < 0,
      };
      this.#unlink(slot);
    } else {
      if (this.#slots.size >= this.limit) {
        // The least recently seen subject goes; its slot is reused.
        slot = this.#prev[HEAD]!;
        this.#unlink(slot);
        this.#slots.delete(this.#subjects[slot]!);
        this.forgotten++;
      } else {
        slot = this.#slots.size + 1;
        if (slot >= this.#next.length) this.#grow();
      }
      this.#slots.set(point.subject, slot);
      this.#subjects[slot] = point.subject;
    }
    // Now the most recent.
    const first = this.#next[HEAD]!;
    this.#next[slot] = first;
    this.#prev[slot] = HEAD;
    this.#prev[first] = slot;
    this.#next[HEAD] = slot;
    const at = slot * FIELDS;
    this.#points[at] = point.time;
    this.#points[at + 1] = point.latitude;
    this.#points[at + 2] = point.longitude;
    this.#points[at + 3] = point.radiusKm;
    this.#points[at + 4] = point.countryOnly ? -point.country : point.country;
    return previous;
  }

  #unlink(slot: number): void {
    const prev = this.#prev[slot]!;
    const next = this.#next[slot]!;
    this.#next[prev] = next;
    this.#prev[next] = prev;
  }

  #grow(): void {
    const slots = Math.min(this.#next.length * 2, this.limit + 1);
    const grow = <T extends Int32Array | Float64Array>(from: T, to: T) => (to.set(from), to);
    this.#prev = grow(this.#prev, new Int32Array(slots));
    this.#next = grow(this.#next, new Int32Array(slots));
    this.#points = grow(this.#points, new Float64Array(slots * FIELDS));
  }
}

/** What a run's travel came to: records judged, impossible among them. */
export interface TravelCounts {
  judged: number;
  impossible: number;
  subjects: number;
  forgotten: number;
  limit: number;
}

/** The judge of one run: records in input order in, verdicts out. */
export class TravelJudge {
  readonly #memory: SubjectMemory;
  readonly #speed: number;
  #judged = 0;
  #impossible = 0;

  constructor(speedKmh = DEFAULT_TRAVEL_SPEED, subjects = DEFAULT_TRAVEL_SUBJECTS) {
    this.#speed = speedKmh;
    this.#memory = new SubjectMemory(subjects);
  }

  /** The travel of `point` from its subject's previous record (null: the first kept). */
  next(point: TravelPoint): TravelVerdict | null {
    const previous = this.#memory.swap(point);
    if (previous === null) return null;
    const verdict = travelBetween(previous, point, this.#speed);
    this.#judged++;
    if (verdict.impossible) this.#impossible++;
    return verdict;
  }

  counts(): TravelCounts {
    return {
      judged: this.#judged,
      impossible: this.#impossible,
      subjects: this.#memory.size,
      forgotten: this.#memory.forgotten,
      limit: this.#memory.limit,
    };
  }
}
