// placeholder until the module contract lands
