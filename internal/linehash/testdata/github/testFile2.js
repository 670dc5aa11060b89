var foo = 0;
var bar = 0;
var baz = 0;
var qux = 0;
