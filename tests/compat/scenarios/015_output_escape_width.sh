# %% is a literal percent, %4j zero-pads the id to 4 digits, %10x, an unknown %q stays,
# a backslash disables patterns (\%j).
script job.sh <<'S'
#!/bin/bash
echo hi
S
submit -J w -o 'pct-%%-%4j-%10x.txt' job.sh
A=$J
submit -J q -o 'unk-%q-%j.txt' job.sh
B=$J
submit -J bs -o 'bs\%j.txt' job.sh
C=$J
for j in "$A" "$B" "$C"; do wait_done "$j"; done
fields "$A" StdOut
fields "$B" StdOut
fields "$C" StdOut
show_outputs
