"""Generation as a pipeline: plan, analyse, render and write, with the worker pools and runtime policy it runs on."""
