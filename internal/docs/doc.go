// Package docs holds no code: its tests check the reference pages under docs/ against
// the code they describe (annotations, labels and event reasons of internal/pic, the
// configuration's flags, variables and file keys, the metrics PIC registers), both ways,
// so that a page can neither miss a name nor document one that does not exist.
package docs
