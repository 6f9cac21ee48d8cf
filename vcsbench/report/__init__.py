"""Reports: tables, comparisons, statistics, plots and studies. Reads the result model
only (``vcsbench.results``); never imports measurement, sandboxes or backends."""
