algorithm a implements all_reduce {
  units p
  step {
    send unit r r + 1 reduce
  }
}
