package maven
