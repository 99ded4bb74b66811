# Every long option of each command's getopt table, in the table's order: an empty name is a
# prefix of every option, so "--=x" makes getopt_long list them all. A missing option, an
# extra one or a different order shows here. (squeue's and scontrol's tables carry drover's
# --json/--yaml, and sacctmgr's --usage; sacct, which needs slurmdbd, is checked in
# tests/integration/test_cli_surface.py.)
for c in sbatch srun salloc sinfo scancel sprio sshare; do
  run $c --=x
done
# What a prefix resolves to depends on that order and on which options exist.
run srun --tas=2 --=x
run salloc --no-=x
