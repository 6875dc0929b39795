# Stray bytes are reported one by one and lexing goes on.
algorithm a implements all_reduce {
  units p @ 2
  let x = 1 $ 2
	let y = !x
}
