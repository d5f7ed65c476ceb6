package layers
