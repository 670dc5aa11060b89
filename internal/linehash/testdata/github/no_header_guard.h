/*
 * Blah blah
 */

#define BLAH 1234
