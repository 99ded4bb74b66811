# A script without "#!" on its first line, an empty script, a script of only blank lines, a
# script with a DOS line ending.
file noshebang.sh <<'S'
echo no interpreter line
S
run sbatch noshebang.sh
file empty.sh </dev/null
run sbatch empty.sh
printf '\n\n' >blank.sh
run sbatch blank.sh
printf '#!/bin/bash\r\necho dos\r\n' >dos.sh
run sbatch dos.sh
run sbatch </dev/null
