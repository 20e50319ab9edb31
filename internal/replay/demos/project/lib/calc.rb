class Calc
  def add(a, b)
    total = a + b
  end

  def average(list)
    list.sum / list.size
  end

  def devide(a, b)
    a / b
  end
end
