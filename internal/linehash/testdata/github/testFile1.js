var a = 0;
var b = 0;
var c = 0;
var d = 0;
