algorithm @@@ {
  this is not stitch
