algorithm a implements all_reduce {
  units a < b < c
  let x = if a then b
}
