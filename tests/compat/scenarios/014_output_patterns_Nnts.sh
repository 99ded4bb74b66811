# Output file name patterns %N (node name), %n (node index), %t (task id), %s (step), %A/%a
# outside an array.
script job.sh <<'S'
#!/bin/bash
echo hi
S
submit -o 'o-%N-%n-%t-%s.txt' job.sh
A=$J
submit -o 'arr-%A-%a.txt' job.sh
B=$J
wait_done "$A"
wait_done "$B"
fields "$A" StdOut
fields "$B" StdOut
show_outputs
