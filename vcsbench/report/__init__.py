"""Reports: tables, headlines, comparisons, plots and exports, written from result files
only (``vcsbench.results``); never imports measurement, sandboxes or backends."""
