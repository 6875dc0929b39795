# root, layout and functions: what sema rejects.
algorithm a implements all_reduce {
  units p
  step { send unit root to 0 }
}
algorithm b implements broadcast {
  fn f(x, y) = x + y
  let k = 1
  units p
  layout f
  layout g
  layout k
  step { layout f }
}
algorithm c implements scatter {
  let early = twice(1)
  fn twice(x) = 2 * x
  fn size(x) = x
  units p
}
