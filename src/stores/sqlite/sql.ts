/**
 * A LIMIT taken from a parameter, for SQLite statements. SQLite plans a LIMIT that is a
 * bare parameter with the value bound to it, so every new binding expires the statement
 * and its next run parses and plans it again: 5 to 10 µs a run, which was most of a FIFO
 * receive. The unary plus keeps the value out of the planner; the limit applies the same.
 */
export const BOUND_LIMIT = 'LIMIT +?';
