# scontrol show hostnames|hostlist|hostlistsorted: expansion, ranging in the order given
# (duplicates kept) or sorted, SLURM_NODELIST as the default for hostnames, a file of names,
# and the errors. (A reversed range is left out: Slurm adds a line naming its internal
# parser function before "Invalid hostlist: ...".)
run scontrol show hostnames 'node[1-3],x5'
run scontrol show hostnames 'n[01-03],m'
run env -u SLURM_NODELIST scontrol show hostnames
run env SLURM_NODELIST='a[1-2]' scontrol show hostnames
for h in 'node1,node3,node2,x' 'a1,b1,a2' 'a1,a2,a4,a3' 'a5,a4,a3' 'x,y,x' 'a[1-3],a[2-5]' \
         'n9,n10' 'a1b2,a1b3' 'n01,n02,n3,n10'; do
  run scontrol show hostlist "$h"
  run scontrol show hostlistsorted "$h"
done
file names.txt <<'S'
a1
a2
b7
S
run scontrol show hostlist "$PWD/names.txt"
run scontrol show hostnames node1 node2
