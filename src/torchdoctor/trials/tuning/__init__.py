"""`torchdoctor tune RECIPE`: the largest batch that fits, the DataLoader worker count, and an
ablation of the performance stack, each measured with the reference Trainer."""
