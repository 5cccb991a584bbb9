namespace osc {}
