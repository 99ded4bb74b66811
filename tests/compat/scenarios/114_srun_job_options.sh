# Standalone srun's job options as the job records them: -J names the job (not the program),
# -A is lower-cased as Slurm does, --mincpus and --tmp land in MinCPUsNode and MinTmpDiskNode.
run sh -c "srun -N1 -J Named -A MixedCase --mincpus=2 sh -c 'scontrol show job \$SLURM_JOB_ID' | grep -o 'JobName=[^ ]*\\|Account=[^ ]*\\|MinCPUsNode=[^ ]*\\|MinTmpDiskNode=[^ ]*'"
run sh -c "srun -N1 --tmp=0 --min=1 sh -c 'scontrol show job \$SLURM_JOB_ID' | grep -o 'MinCPUsNode=[^ ]*\\|MinTmpDiskNode=[^ ]*'"
