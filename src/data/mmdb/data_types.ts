/**
 * The MaxMind DB data section's type numbers (the format specification's
 * "Output Data Types"), and libmaxminddb's nesting limit: one list for the
 * decoder that serves lookups (decoder.ts) and the check at install
 * (src/data/sources/verify_data.ts).
 */

export const T_EXTENDED = 0;
export const T_POINTER = 1;
export const T_STRING = 2;
export const T_DOUBLE = 3;
export const T_BYTES = 4;
export const T_UINT16 = 5;
export const T_UINT32 = 6;
export const T_MAP = 7;
export const T_INT32 = 8;
export const T_UINT64 = 9;
export const T_UINT128 = 10;
export const T_ARRAY = 11;
export const T_CONTAINER = 12;
export const T_END_MARKER = 13;
export const T_BOOLEAN = 14;
export const T_FLOAT = 15;

/** libmaxminddb's MAXIMUM_DATA_STRUCTURE_DEPTH. */
export const MAX_DEPTH = 512;
